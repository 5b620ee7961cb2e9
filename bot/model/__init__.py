"""The registry as data: entries, schemas, ownership, naming rules, schema evolution."""
