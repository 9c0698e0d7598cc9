// Placeholder until the client API lands.
namespace ember { int ClientApiVersion() { return 1; } }  // namespace ember
