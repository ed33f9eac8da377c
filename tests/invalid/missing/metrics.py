"""Support module for the invalid-config corpus."""


class MultiMetric:
    pass
