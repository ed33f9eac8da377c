"""Support module for the invalid-config corpus: it does not parse, on purpose."""

class Net(:
    pass
