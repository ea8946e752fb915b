// One address handle: where a UD send goes (the peer's port, GID and path attributes).
#pragma once

#include <string>

#include "core/verbs/errors.hpp"
#include "core/verbs/protection_domain.hpp"
#include "core/verbs/queue_pair.hpp"

namespace rdmasweep::verbs {

class AddressHandle {
 public:
  AddressHandle() = default;
  // The peer `to` (its GID, LID and the path attributes; its QPN is the WR's) from `port`.
  AddressHandle(const ProtectionDomain& pd, const PeerAddress& to, uint8_t port) {
    ibv_ah_attr a{};
    a.dlid = to.lid;
    a.sl = to.sl;
    a.port_num = port;
    if (to.use_gid) {
      a.is_global = 1;
      a.grh.dgid = to.gid;
      a.grh.sgid_index = to.sgid_index;
      a.grh.hop_limit = 64;
      a.grh.traffic_class = to.traffic_class;
      a.grh.flow_label = to.flow_label;
    }
    const std::string what = "ibv_create_ah(port " + std::to_string(port) + ", sgid index " +
                             std::to_string(to.sgid_index) + ") (a wrong GID index is the usual cause)";
    ah_ = Handle<ibv_ah, ibv_destroy_ah>(check_ptr(ibv_create_ah(pd.get(), &a), what), "ibv_destroy_ah");
  }
  // A ready-made attribute set (a multicast group's, from its join).
  AddressHandle(const ProtectionDomain& pd, ibv_ah_attr a, const std::string& what) {
    ah_ = Handle<ibv_ah, ibv_destroy_ah>(check_ptr(ibv_create_ah(pd.get(), &a), what), "ibv_destroy_ah");
  }
  ibv_ah* get() const { return ah_.get(); }

 private:
  Handle<ibv_ah, ibv_destroy_ah> ah_;
};

}  // namespace rdmasweep::verbs
