// What one side of a point tells the other so it can connect its QPs and address
// its buffer: a plain type that setup produces (TestResources::local_endpoint) and
// consumes (connect), and that the control protocol carries (core/control/protocol.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmasweep {

struct Endpoint {
  uint16_t lid = 0;
  std::string gid;  // IPv6 text form
  uint8_t mtu = 3;  // ibv_mtu enum value (1..5)
  uint32_t rkey = 0;
  std::vector<uint32_t> rkeys;  // --mr-per-qp: one per QP region (then rkey is 0); else empty
  uint64_t addr = 0;
  uint64_t slot_bytes = 0;     // bytes per QP region
  uint32_t regions = 0;        // QP regions in each of the rx and tx areas
  std::vector<uint32_t> qpn;   // one per QP
  std::vector<uint32_t> psn;
  // SEND on iWARP, the receiving side: where its receive counts are, one word per QP,
  // and the rkey that READs them this test (0: none; core/engine/send_credits.hpp).
  uint64_t credit_addr = 0;
  uint32_t credit_rkey = 0;
  // SETUP_OK to a --cm client (first thread's endpoint): the port the server's RDMA-CM
  // listener waits on for this point's QPs; 0: none (not --cm, or an older server).
  uint16_t cm_port = 0;
};

}  // namespace rdmasweep
