"""The commands layer: the body of each invoke task (tasks.py calls these, nothing below imports them).

Layers, top to bottom: tasks.py -> forge.commands.* -> forge.cli (what the commands share: error
guard, setup, selection, scheduling) -> the stage modules (matrix, resolve, plan, images, build,
verify, manifest, provenance, repro, report, ...). tests/unit/test_layers.py keeps it that way.
"""
