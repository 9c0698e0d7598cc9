"""Cross targets: the tools they need, their emulator, and the native build they are compared with."""
