"""Mininet-WiFi's clean-up (``mn_wifi.clean``): Mininet's, which takes
down every lab the layer built (radios and all go with their lab)."""

from mininet.clean import Cleanup, cleanup, sh

__all__ = ["Cleanup", "CleanupWifi", "cleanup", "sh"]

CleanupWifi = Cleanup
