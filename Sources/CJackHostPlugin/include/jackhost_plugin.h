// Placeholder: the plugin ABI header is being written.
#ifndef JACKHOST_PLUGIN_H
#define JACKHOST_PLUGIN_H
#endif
