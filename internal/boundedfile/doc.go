// Package boundedfile reads a whole file that the processes load at run
// time (the edge's config, secret, JWKS and identity key files, TLS
// certificates and keys, and the files a watch polls) with a bound on its
// size, so a path naming a device (/dev/urandom, /dev/zero), a FIFO or a
// runaway file fails with an error naming the file and the bound instead
// of growing the process until the kernel kills it.
//
// Read refuses a regular file larger than the bound from its size, before
// reading it; anything else is read up to the bound plus one byte and
// refused when that byte arrives. A limit of zero or less means
// DefaultLimit (4 MiB), far above any file Portico reads: its largest, a
// config with many routes and keys, is tens of kilobytes.
//
// Read is safe for concurrent use.
package boundedfile
