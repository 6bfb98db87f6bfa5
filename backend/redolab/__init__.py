"""redolab: plan a database standby build with measured numbers.

The folders are the layers; folder order is import order, lowest first (tests/test_layers.py):
core, redoprobe -> auth, remote -> environments -> jobs -> redo, runs -> disktest, sweeps, charts,
lab -> hadr -> planning -> web -> worker, main, cli (the entry points; models imports every table).
"""

__version__ = "0.1.0"
