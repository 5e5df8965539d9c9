"""The dashboard: headless run models (``config``, ``run_model``, ``buffer``, …) and Panel views.

``create_app()`` builds the explorer for a session or a notebook. It is
imported lazily so that the model modules work without Panel.
"""


def create_app(*args, **kwargs):
    """Build the explorer (see ``dashboard.explorer.create_app``)."""
    from .explorer import create_app as _create_app

    return _create_app(*args, **kwargs)


__all__ = ["create_app"]
