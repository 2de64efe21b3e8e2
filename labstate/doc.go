// Package labstate holds the data of a lab: State, what a lab's state
// directory records (the resolved Spec, namespaces, links and how each is
// built, processes, OVS and Wi-Fi parts), and the live views the runtime
// reads from it (LinkInfo, WiFiNodeStatus, OVSInfo), with their JSON
// encodings. It has types and pure methods only: package emu (the
// runtime) fills them and uses them under the same names, package lab
// gives them to its clients, and neither client needs the other.
package labstate
