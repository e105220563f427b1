"""The property table by section: one module each, assembled by :mod:`hmb.properties.table`."""
