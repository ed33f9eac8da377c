"""Support module for the invalid-config corpus."""


def Net(**kwargs):
    return kwargs
