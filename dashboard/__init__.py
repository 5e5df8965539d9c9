"""The page floor: the explorer (Panel), its cards and views (Bokeh, HoloViews), and a bake-off's page.

``create_app()`` builds the explorer for a session or a notebook (imported when
called: ``dashboard.bakeoff_page`` does not load the explorer).
"""


def create_app(*args, **kwargs):
    """Build the explorer (see ``dashboard.explorer.create_app``)."""
    from .explorer import create_app as _create_app

    return _create_app(*args, **kwargs)


__all__ = ["create_app"]
