"""The dashboard's live views: each a ``LiveView`` (``base``) drawn from ``RunInfo`` and ``Snapshot`` objects only."""
