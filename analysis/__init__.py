"""hepfmt: how do ROOT and Parquet compare on NanoAOD-like data, on this machine, today."""

__version__ = "0.1.0"
