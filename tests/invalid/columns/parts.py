def rows(split="train"):
    pass


class TwoInputs:
    def __init__(self, num_classes=10):
        pass


def my_loss(smoothing=0.0):
    pass
