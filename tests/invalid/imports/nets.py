"""Support module for the invalid-config corpus: defines Net, make_data and Multi, but not Nte."""


class Net:
    pass


def make_data():
    return None


class Multi:
    pass
