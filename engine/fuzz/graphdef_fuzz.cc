// libFuzzer target for the GraphDef loader (binary wire format and JSON mapping).
// Build: cmake -DEMBER_BUILD_FUZZERS=ON -DCMAKE_CXX_COMPILER=clang++ (adds
// -fsanitize=fuzzer,address,undefined); run: graphdef_fuzz -max_total_time=600 CORPUS_DIR.
// Properties checked beyond "no crash": a parsed graph re-serializes and parses back to the
// same node names, ops and inputs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ember/graph_def.h"

namespace {
void Check(bool ok, const char* what) {
  if (!ok) {
    __builtin_printf("graphdef_fuzz: property violated: %s\n", what);
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ember::GraphDef graph;
  ember::Status s;
  if (size > 0 && data[0] == '{') {
    s = ember::ParseGraphDefJson(std::string(reinterpret_cast<const char*>(data), size), &graph);
  } else {
    s = ember::ParseGraphDefBinary(data, size, &graph);
  }
  if (!s.ok()) {
    Check(!s.message().empty(), "an error has a message");
    return 0;
  }
  std::string wire = ember::SerializeGraphDefBinary(graph);
  ember::GraphDef back;
  ember::Status s2 = ember::ParseGraphDefBinary(wire.data(), wire.size(), &back);
  Check(s2.ok(), "a serialized graph parses");
  Check(back.node.size() == graph.node.size(), "round trip keeps the node count");
  for (size_t i = 0; i < graph.node.size(); ++i) {
    Check(back.node[i].name == graph.node[i].name, "round trip keeps names");
    Check(back.node[i].op == graph.node[i].op, "round trip keeps ops");
    Check(back.node[i].input == graph.node[i].input, "round trip keeps inputs");
    Check(back.node[i].attr.size() == graph.node[i].attr.size(), "round trip keeps attrs");
  }
  return 0;
}
