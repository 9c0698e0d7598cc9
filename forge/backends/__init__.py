"""Backends run a plan's steps somewhere: on the host (`local`) or in a container (`docker`)."""
