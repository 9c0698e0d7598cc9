"""Structure checks of built artifacts (ELF, Mach-O, exported symbols) and native/cross parity."""
