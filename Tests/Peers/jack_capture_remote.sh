#!/bin/sh
# A remote for jack_capture, as its users write one: jack_capture --osc PORT --timemachine ...
# records while /jack_capture/tm/start .. /jack_capture/tm/stop, /jack_capture/rotate goes on in
# a new file, and /jack_capture/stop ends the program (jack_capture --help-osc). Only liblo's
# oscsend and jack_capture's own paths: OSCControlTests runs this file unchanged against
# jack_capture and against jackhost.
#
# Usage: jack_capture_remote.sh [PORT]   (jack_capture's example port, 7777, by default)
set -e
port=${1:-7777}
oscsend localhost "$port" /jack_capture/tm/start
sleep 1
oscsend localhost "$port" /jack_capture/rotate
sleep 1
oscsend localhost "$port" /jack_capture/tm/stop
sleep 0.5
oscsend localhost "$port" /jack_capture/stop
