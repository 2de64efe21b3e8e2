// Package model is emuctl's 802.11 model in pure Go (no syscalls; it
// builds and tests on any OS): what a frame costs on the air and what a
// shared channel delivers. The Wi-Fi medium that serves a lab's hwsim
// radios and `emuctl model wifi` both use it.
//
//   - phy.go: rates (DSSS/CCK, legacy OFDM, HT, VHT, HE) and TXTIME —
//     preambles, symbol times, guard intervals, the 2.4 GHz signal
//     extension; control-response rates from the basic rate set.
//   - mac.go: modes, bands, EDCA parameters (AIFS, CWmin/CWmax per access
//     category), ACK/Block Ack airtime, ACK timeout, EIFS, A-MPDU framing
//     and limits (64 subframes, 65 535 B for HT, aPPDUMaxTime 5.484 ms).
//   - errors.go: per-attempt frame error rate from SNR, the equations of
//     ns-3's YansErrorRateModel (and its DSSS model).
//   - radio.go: path loss (free space, log-distance, ITU indoor), noise
//     floor, ns-3's PHY defaults.
//   - budget.go: the link budget, written once — positions → distance →
//     path loss → received power → SNR over the noise floor, and whether
//     frames reach and are detected (the medium's links, ranges and
//     roaming, and `emuctl model wifi`).
//   - analytic.go: the closed-form airtime of one exchange with the mean
//     backoff, and Bianchi's saturation model.
//   - sim.go: a discrete-event DCF/EDCA simulation of n saturated
//     stations on one shared channel (every node hears every node):
//     uniform backoff frozen while busy, collisions when counters meet,
//     CW doubling, retry limits, ACK timeout and EIFS, per-MPDU errors,
//     A-MPDU with a Block Ack bitmap, TCP ACKs from the access point
//     contending for the same channel.
//   - medium.go: the event-driven medium the labs' radios use (frames as
//     they come, the caller owns the clock), with a physical layer per
//     radio as ns-3 3.37's YansWifiPhy has it: each radio hears each PPDU
//     (ACKs and Block Acks included) at the power its Link gives, senses
//     the medium on its own (preamble detected at −82 dBm and 4 dB SINR,
//     or the energy of everything it hears at −82 dBm; −62 dBm, CCA-ED,
//     for a preamble its own transmission cancelled), locks on the first
//     detected preamble (no frame capture), and decodes by SINR chunk by
//     chunk (header and each MPDU; powers summed in mW), so hidden
//     stations transmit over each other and a strong frame can survive a
//     weak one. NAV from frames decoded for others, EIFS after a header
//     decoded with nothing after it.
//   - medium_sim.go: n saturated stations through the medium (positions,
//     hidden stations), for `emuctl model wifi --engine medium`.
//
// What is not modelled here (yet): RTS/CTS and CTS-to-self protection,
// TXOP bursts (VI/VO TXOP limits), the BlockAckReq an originator sends
// after a missed Block Ack (the medium retransmits the A-MPDU's missing
// MPDUs instead), rate control (the rate is fixed), multi-user (OFDMA,
// MU-MIMO) and 802.11be.
package model
