"""Mininet-WiFi's wmediumd modes (``mn_wifi.wmediumdConnector``).

On emuctl every Wi-Fi lab has emuctl's medium — airtime, contention,
interference, SNR from positions — so ``Mininet_wifi(link=wmediumd,
wmediumd_mode=interference)`` asks for what emuctl always does. The
other modes set per-link SNRs or error probabilities by hand instead of
positions: :data:`snr` is accepted (emuctl's SNR comes from positions and
the path loss, as interference mode's does), :data:`error_prob` refused.
"""


class interference:
    """wmediumd's interference mode: positions, path loss, interference."""

    mode = "interference"


class snr:
    """wmediumd's SNR mode."""

    mode = "snr"


class error_prob:
    """wmediumd's error-probability mode (per-link error probabilities)."""

    mode = "error_prob"


class interference_802154:
    """802.15.4 interference (6LoWPAN is not built by emuctl)."""

    mode = "interference_802154"


class w_cst:
    """wmediumd's mode numbers."""

    SNR_MODE = 0
    ERRPROB_MODE = 1
    INTERFERENCE_MODE = 2
