"""``resample_bridge.api``: the Python facade (inspect / check / convert / verify as functions returning typed
records). The implementation lives in ``tools/api.py`` beside the CLI it mirrors; this package only gives it
its short import name."""

from resample_bridge.tools.api import *  # noqa: F401,F403
from resample_bridge.tools.api import __all__, __doc__  # noqa: F401
