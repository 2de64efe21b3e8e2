"""Mininet-WiFi's Python API on emuctl's Wi-Fi (the compatibility layer).

Importable as ``mn_wifi`` under ``emuctl mininet``, beside the ``mininet``
layer it builds on. Written from Mininet-WiFi's documented API and its
examples (never copied): ``Mininet_wifi`` declares access points and
stations with Mininet-WiFi's names, addresses and positions; ``build()``
brings them up as one emuctl lab whose Wi-Fi is emuctl's medium (airtime,
contention, SNR, rates — on mac80211_hwsim radios where the kernel has
them, on emuctl's engine elsewhere). Mobility becomes emuctl's mobility
(waypoints or a seeded model, placed 20 times a second by the lab's
supervisor), the propagation model emuctl's path loss, and stations a
script does not link to an access point roam between the access points of
one SSID as emuctl's medium decides; ad hoc (``cls=adhoc``) and 802.11s
mesh (``cls=mesh``, on mac80211_hwsim) links are built. What emuctl
cannot honour (client isolation, several wireless interfaces per node, a
propagation model it has not) is an error naming it.
"""

VERSION = "2.6"  # the Mininet-WiFi API this layer follows
