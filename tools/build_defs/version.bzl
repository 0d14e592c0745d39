"""The version of every chainrule wheel."""

CHAINRULE_VERSION = "0.1.0"
