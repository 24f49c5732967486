package sstableintegration

import (
	_ "github.com/cockroachdb/pebble/v2/cockroachkvs"
	_ "github.com/cockroachdb/pebble/v2/metamorphic"
)
