// Package sstableintegration holds tests that run the cuckoo filter policy
// inside Pebble sstables and databases.
package sstableintegration
