// orphaned.hpp - what a read-only command says of a filter whose interface is gone.
//
// show, stats, top, the list listings and events still read an orphaned filter's maps
// (what it counted and held is worth seeing), but must not present it as live: they
// say so first, on stderr, so that their output (JSON included) keeps its shape.
#pragma once

#include <string>

namespace levee {
struct Pinned;
}

namespace levee::cli {

// One line on stderr when the interface's pinned filter is orphaned; nothing else
// (not attached, unreadable: the command's own open says what is wrong).
void warn_if_orphaned(const Pinned& p);
void warn_if_orphaned(const std::string& iface);

}  // namespace levee::cli
