#include "ember/graph_def.h"
namespace ember {
Status ParseGraphDefBinary(const void*, size_t, GraphDef*) {
  return errors::Unimplemented("binary GraphDef");
}
Status ParseGraphDefJson(const std::string&, GraphDef*) {
  return errors::Unimplemented("json GraphDef");
}
Status ReadGraphDefFile(const std::string&, GraphDef*) {
  return errors::Unimplemented("GraphDef file");
}
std::string SerializeGraphDefBinary(const GraphDef&) { return std::string(); }
}  // namespace ember
