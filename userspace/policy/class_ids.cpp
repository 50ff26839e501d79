#include "policy/class_ids.hpp"

#include <algorithm>

namespace levee {

ClassIds class_ids(const lv_policy& slot) {
  ClassIds out;
  for (uint8_t id : class_order(slot)) out[name_of(slot.classes[id].name)] = id;
  return out;
}

std::vector<uint8_t> class_order(const lv_policy& slot) {
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < std::min<uint32_t>(slot.nr_classes, LV_MAX_CLASSES); ++i)
    out.push_back(slot.order[i] & (LV_MAX_CLASSES - 1));
  return out;
}

std::vector<uint8_t> assign_class_ids(const std::vector<ClassSpec>& classes, const ClassIds& prior) {
  std::vector<uint8_t> ids(classes.size(), 0);
  std::vector<bool> taken(LV_MAX_CLASSES, false), kept(classes.size(), false), freed(LV_MAX_CLASSES, false);
  for (const auto& [name, id] : prior) freed[id & (LV_MAX_CLASSES - 1)] = true;
  for (size_t i = 0; i < classes.size(); ++i) {
    auto it = prior.find(classes[i].name);
    if (it == prior.end() || taken[it->second]) continue;
    ids[i] = it->second;
    taken[it->second] = kept[i] = true;
    freed[it->second] = false;
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    if (kept[i]) continue;
    unsigned id = 0;
    while (id < LV_MAX_CLASSES && (taken[id] || freed[id])) ++id;
    if (id == LV_MAX_CLASSES)  // every free id was just freed: reuse one after all
      for (id = 0; taken[id]; ++id) {
      }
    ids[i] = static_cast<uint8_t>(id);
    taken[id] = true;
  }
  return ids;
}

}  // namespace levee
