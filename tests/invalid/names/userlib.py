"""Support module for the names cases: objects named like the generated scripts' own names."""


def process_gradients(grads, weights):
    return grads


def sys():
    pass


class Net:
    def __init__(self, **kwargs):
        pass


def make_data(**kwargs):
    return None
