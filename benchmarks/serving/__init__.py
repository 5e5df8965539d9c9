"""The dashboard under load: a classroom of simulated sessions (``classroom``) and the live page's
responsiveness while another session works (``dashboard_live``).

The classroom's parts: ``server`` (the served app and its processes), ``clients`` (Chromium pages and light
websocket clients), ``measurements`` (what is measured and its summary), ``headless`` (the baseline without a
server), ``page_speed`` (a fresh server's page speed), ``hostile`` (one session's hostile input against another's
clicks), ``burst`` (a class's pages requested at once) and ``report`` (the tables it prints).
"""
