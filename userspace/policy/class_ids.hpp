// class_ids.hpp - which of the datapath's LV_MAX_CLASSES ids each class holds. Keys and
// counters are kept by id, so a reload gives a class that keeps its name the id it had,
// and a new class an id whose old state it will not inherit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "levee_abi.h"
#include "policy/policy.hpp"

namespace levee {

// Class ids by name, of a compiled slot: what a reload keeps.
using ClassIds = std::map<std::string, uint8_t>;
ClassIds class_ids(const lv_policy& slot);
// The ids of a compiled slot's classes in first-match order.
std::vector<uint8_t> class_order(const lv_policy& slot);
// An id per class (in the policy's order): a class named in `prior` keeps its id; a new
// class takes the lowest free id not just freed, so state left by a removed class is not
// handed straight to a new one.
std::vector<uint8_t> assign_class_ids(const std::vector<ClassSpec>& classes, const ClassIds& prior);

}  // namespace levee
