/* The control protocol between client and server: message layouts, encoding and decoding. */
#ifndef REDOPROBE_WIRE_H
#define REDOPROBE_WIRE_H

#include <stdint.h>

/* Control messages, all fields in network byte order. */
#define MAGIC_HELLO "RDPB"
#define MAGIC_DATA "RDPD"
#define MAGIC_END "RDPE"
#define MAGIC_RESULT "RDPR"
#define HELLO_BYTES 32
#define ACK_BYTES 32
#define DATA_HEADER_BYTES 24
#define END_BYTES 12
#define RESULT_BYTES 44
#define COOKIE_BYTES 16
#define SYNC_ACK_BYTES 8 /* sync mode: the server acknowledges each message with its sequence */

/* ACK_TOO_LONG: the test asks for longer than the server's --max-duration (it would be cut there) */
enum ack_status { ACK_OK = 0, ACK_VERSION = 1, ACK_BAD_PARAMS = 2, ACK_TOO_LONG = 3 };

#define HELLO_REVERSE 0x01  /* flags: the server sends, the client receives */
#define HELLO_ZEROCOPY 0x02 /* the sending side uses sendfile() from a memfd */
/* --schedule: on each data connection the server sends back its cumulative count of bytes received
 * there and when its last byte arrived, on the server's CLOCK_MONOTONIC in nanoseconds (the kernel's
 * receive time where it gives one): PROGRESS_BYTES, two u64 in network order. The client knows its
 * offset to that clock only up to the count's way back: it takes the fastest way back seen lately as
 * half the connection's minimum RTT, so a count delayed on its way back is not read as lag. In ASYNC
 * a count is taken once a message's worth arrived since the last one or PROGRESS_SECONDS after the
 * oldest byte not yet counted arrived (every byte is counted within PROGRESS_SECONDS, and a burst of
 * whole messages costs one count each, no timer), and once more at EOF. The counts taken leave
 * together with a fresh one, at most one packet every PROGRESS_PACKET_SECONDS (a count taken after a
 * quiet spell at once; up to 100 MiB/s in 1 MiB messages every count), or when PROGRESS_HELD are
 * held, or PROGRESS_HELD_SECONDS after the oldest was taken when no count came since. Each carries
 * its own moment, so holding it back adds nothing to the lag measured, and the fresh count at the end
 * of each packet keeps the client's clock offset as exact as before; at 1,000 MiB/s the sender's
 * kernel handles a fifth of the packets coming back. In SYNC a count is taken and sent at once whenever the receive queue is drained, so a
 * message is acknowledged as soon as its last byte arrived (the count replaces the sequence number:
 * messages vary in size, the last of a slot being shorter). */
#define HELLO_SCHEDULE 0x04
#define PROGRESS_BYTES 16
#define PROGRESS_SECONDS 0.001 /* a count's age adds at most this to the lag */
#define PROGRESS_PACKET_SECONDS 0.005 /* ASYNC: counts leave with a fresh one at most this often... */
#define PROGRESS_HELD 64 /* ...or when this many are held, */
#define PROGRESS_HELD_SECONDS (2 * PROGRESS_PACKET_SECONDS) /* or the oldest is this old */

struct hello {
    uint16_t protocol;
    uint8_t mode;
    uint8_t flags;
    uint16_t conns;
    uint32_t message_bytes;
    uint64_t sockbuf_bytes;
    uint64_t duration_ms;
};

struct ack {
    uint16_t protocol;
    uint16_t status;
    uint8_t cookie[COOKIE_BYTES];
    uint32_t rcvbuf_bytes;
    uint32_t sndbuf_bytes;
};

struct result {
    uint64_t bytes_received;
    uint64_t write_us;
    uint64_t cpu_user_us;
    uint64_t cpu_system_us;
    uint32_t streams;
    uint32_t flags; /* bit 0: the server wrote to disk */
};

/* The decoders return 0, or -1 when the message does not start with its magic. */
void encode_hello(const struct hello *h, uint8_t out[HELLO_BYTES]);
int decode_hello(const uint8_t in[HELLO_BYTES], struct hello *h);
void encode_ack(const struct ack *a, uint8_t out[ACK_BYTES]);
int decode_ack(const uint8_t in[ACK_BYTES], struct ack *a);
void encode_result(const struct result *r, uint8_t out[RESULT_BYTES]);
int decode_result(const uint8_t in[RESULT_BYTES], struct result *r);
/* END: the client stops the test, with the bytes it sent (0 in reverse). */
void encode_end(uint64_t bytes_sent, uint8_t out[END_BYTES]);
int decode_end(const uint8_t in[END_BYTES], uint64_t *bytes_sent);
/* The first bytes of data connection `id`: the cookie the server's ack gave. decode_data_header
 * also returns -1 when the cookie is not this test's. */
void encode_data_header(const uint8_t cookie[COOKIE_BYTES], uint32_t id, uint8_t out[DATA_HEADER_BYTES]);
int decode_data_header(const uint8_t in[DATA_HEADER_BYTES], const uint8_t cookie[COOKIE_BYTES], uint32_t *id);
void put_u64(uint8_t *p, uint64_t v);
uint64_t get_u64(const uint8_t *p);
void put_u32(uint8_t *p, uint32_t v);
uint32_t get_u32(const uint8_t *p);

#endif
