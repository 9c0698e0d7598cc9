// Binary GraphDef pieces shared by graph_def_binary.cc and graph_def_library.cc (the
// FunctionDefLibrary reader and writer). Internal to the loader.
#ifndef EMBER_CORE_GRAPH_DEF_WIRE_H_
#define EMBER_CORE_GRAPH_DEF_WIRE_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/wire_format.h"
#include "ember/graph_def.h"

namespace ember {
namespace graph_wire {

// "Corrupt GraphDef: where: what (...)".
Status Corrupt(const std::string& where, const std::string& what);
// One NodeDef; `prefix` names the enclosing function for errors ("" in the top-level graph).
Status ParseNode(const uint8_t* data, size_t size, size_t index, NodeDef* node,
                 const std::string& prefix = "");
// One map<string, AttrValue> entry; `depth` bounds NameAttrList nesting.
Status ParseAttrMapEntry(const uint8_t* data, size_t size, const std::string& where, int depth,
                         std::map<std::string, AttrValue>* attrs);
// GraphDef.library.
Status ParseLibrary(const uint8_t* data, size_t size, FunctionDefLibrary* out);

std::string EncodeNode(const NodeDef& node);
void WriteAttrMap(wire::Writer* w, uint32_t field, const std::map<std::string, AttrValue>& attrs);
std::string EncodeLibrary(const FunctionDefLibrary& lib);

}  // namespace graph_wire
}  // namespace ember

#endif  // EMBER_CORE_GRAPH_DEF_WIRE_H_
