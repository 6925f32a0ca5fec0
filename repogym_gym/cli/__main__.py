"""``python -m repogym_gym.cli`` runs the ``repogym`` command."""

from repogym_gym.cli.app import main

main()
