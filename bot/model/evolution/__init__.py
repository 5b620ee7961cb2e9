"""Schema evolution: the classes of change with their digits per direction, witnesses, and the
transitive check."""
