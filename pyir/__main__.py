"""``python -m pyir``: run the demo."""

from .demo import main

main()
