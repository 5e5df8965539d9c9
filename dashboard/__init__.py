"""Panel components of the discrete-sampler explorer (composed in ``app.py``)."""

from .catalogue import Catalogue

__all__ = ["Catalogue"]
