"""An array seen only through the DLPack protocol (as a torch tensor is), for the tests of
arguments passed by ``__dlpack__``."""


class DLPackOnly:
    """An array-like that offers only ``__dlpack__`` and ``__dlpack_device__``."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()
