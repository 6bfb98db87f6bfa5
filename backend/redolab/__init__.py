"""redolab: plan a database standby build with measured numbers."""

__version__ = "0.1.0"
