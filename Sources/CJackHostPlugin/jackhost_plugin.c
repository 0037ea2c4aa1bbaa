// Pins the layout of ABI versions 1 and 2 of jackhost_plugin.h.
//
// Why this file exists: plugins are compiled separately from the host, so an
// accidental change to a struct (a field moved, a type widened) would not fail
// any build; it would corrupt memory at run time. These assertions make such a
// change fail here instead. Appending fields is allowed by the versioning
// policy (update the sizes below); anything else needs a new ABI version.
#include "jackhost_plugin.h"

#if JACKHOST_PLUGIN_ABI_VERSION != 2
#error "update the layout assertions for the new ABI version"
#endif

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu  // the LP64 layout (x86_64, aarch64 Linux)
_Static_assert(offsetof(jackhost_plugin_option_t, name) == 0, "option.name moved");
_Static_assert(offsetof(jackhost_plugin_option_t, type) == 8, "option.type moved");
_Static_assert(offsetof(jackhost_plugin_option_t, default_value) == 16, "option.default_value moved");
_Static_assert(offsetof(jackhost_plugin_option_t, help) == 24, "option.help moved");
_Static_assert(sizeof(jackhost_plugin_option_t) == 32, "option size changed");

_Static_assert(sizeof(jackhost_plugin_key_value_t) == 16, "key/value size changed");

_Static_assert(offsetof(jackhost_plugin_format_t, struct_size) == 0, "format.struct_size moved");
_Static_assert(offsetof(jackhost_plugin_format_t, channel_count) == 4, "format.channel_count moved");
_Static_assert(offsetof(jackhost_plugin_format_t, sample_rate) == 8, "format.sample_rate moved");
_Static_assert(sizeof(jackhost_plugin_format_t) == 16, "format size changed");

_Static_assert(offsetof(jackhost_plugin_block_t, struct_size) == 0, "block.struct_size moved");
_Static_assert(offsetof(jackhost_plugin_block_t, channel_count) == 4, "block.channel_count moved");
_Static_assert(offsetof(jackhost_plugin_block_t, channels) == 8, "block.channels moved");
_Static_assert(offsetof(jackhost_plugin_block_t, frame_count) == 16, "block.frame_count moved");
_Static_assert(offsetof(jackhost_plugin_block_t, frame_time) == 20, "block.frame_time moved");
_Static_assert(offsetof(jackhost_plugin_block_t, microseconds) == 24, "block.microseconds moved");
_Static_assert(offsetof(jackhost_plugin_block_t, sequence) == 32, "block.sequence moved");
_Static_assert(offsetof(jackhost_plugin_block_t, xrun) == 40, "block.xrun moved");
_Static_assert(offsetof(jackhost_plugin_block_t, dropped_frames_before) == 48, "block.dropped_frames_before moved");
_Static_assert(sizeof(jackhost_plugin_block_t) == 56, "block size changed");

_Static_assert(offsetof(jackhost_plugin_descriptor_t, abi_version) == 0, "descriptor.abi_version moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, struct_size) == 4, "descriptor.struct_size moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, name) == 8, "descriptor.name moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, version) == 16, "descriptor.version moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, mode) == 24, "descriptor.mode moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, option_count) == 28, "descriptor.option_count moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, options) == 32, "descriptor.options moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, plugin_data) == 40, "descriptor.plugin_data moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, create) == 48, "descriptor.create moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, prepare) == 56, "descriptor.prepare moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, process) == 64, "descriptor.process moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, finish) == 72, "descriptor.finish moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, destroy) == 80, "descriptor.destroy moved");
// Version 1 ends here: a version 1 descriptor's struct_size is 88.
_Static_assert(offsetof(jackhost_plugin_descriptor_t, result_count) == 88, "version 1 size changed");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, results) == 96, "descriptor.results moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, create2) == 104, "descriptor.create2 moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, handle_event) == 112, "descriptor.handle_event moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, block_frames) == 120, "descriptor.block_frames moved");
_Static_assert(offsetof(jackhost_plugin_descriptor_t, sample_rate) == 128, "descriptor.sample_rate moved");
_Static_assert(sizeof(jackhost_plugin_descriptor_t) == 136, "descriptor size changed");

_Static_assert(offsetof(jackhost_plugin_event_t, kind) == 4, "event.kind moved");
_Static_assert(offsetof(jackhost_plugin_event_t, value) == 8, "event.value moved");
_Static_assert(offsetof(jackhost_plugin_event_t, sample_rate) == 16, "event.sample_rate moved");
_Static_assert(sizeof(jackhost_plugin_event_t) == 24, "event size changed");

_Static_assert(sizeof(jackhost_plugin_result_t) == 24, "result size changed");

_Static_assert(offsetof(jackhost_host_t, host_data) == 8, "host.host_data moved");
_Static_assert(offsetof(jackhost_host_t, log) == 16, "host.log moved");
_Static_assert(offsetof(jackhost_host_t, frame_clock) == 24, "host.frame_clock moved");
_Static_assert(offsetof(jackhost_host_t, publish) == 32, "host.publish moved");
_Static_assert(sizeof(jackhost_host_t) == 40, "host size changed");
#endif
