"""The dashboard under load: a classroom of simulated sessions (``classroom``) and the live page's
responsiveness while another session works (``dashboard_live``).
"""
