"""``chainrule-migrate``: reports and rewrites Variable-era code (see cli.py)."""
