// An opened RDMA device (ibv_context) with its attributes and one port's attributes.
#pragma once

#include <infiniband/verbs.h>

#include <string>
#include <vector>

#include "core/verbs/handle.hpp"

namespace rdmasweep::verbs {

// Names of all RDMA devices on this host (empty when there are none).
std::vector<std::string> list_devices();
// The kernel's index of device `name` (what RDMA netlink names it by), or -1.
int kernel_index(const std::string& name);

class Device {
 public:
  Device() = default;
  Device(Device&&) = default;
  Device& operator=(Device&&) = default;  // the spacer goes first (declared first), then the context
  ~Device() { siw_spacer_.reset(); }      // a CQ must go before its context
  // Opens `name` (or the first device when empty) and queries `port`.
  // Throws Error with the list of devices that do exist when `name` is unknown.
  static Device open(const std::string& name, uint8_t port);

  ibv_context* get() const { return ctx_.get(); }
  const std::string& name() const { return name_; }
  uint8_t port() const { return port_; }
  const ibv_device_attr& attr() const { return attr_; }
  const ibv_port_attr& port_attr() const { return port_attr_; }
  bool is_ethernet() const { return port_attr_.link_layer == IBV_LINK_LAYER_ETHERNET; }
  // iWARP (RDMA over TCP: Soft-iWARP siw, Chelsio, Intel): its QPs connect only
  // through RDMA-CM, and it has no UD, no atomics and no immediate data.
  bool is_iwarp() const { return ctx_.get()->device->transport_type == IBV_TRANSPORT_IWARP; }
  std::string firmware() const { return attr_.fw_ver; }
  // Largest max_inline_data an RC QP can be created with. Devices do not report it,
  // so it is probed once (creating a few QPs) and cached.
  uint32_t max_inline() const;

 private:
  void reserve_siw_invalid_key();

  // Soft-iWARP only: a CQ over the context's first mmap pages, so that no later queue is
  // mapped at offset 0x90000, the value libsiw takes for "invalid key" (see device.cpp).
  Handle<ibv_cq, ibv_destroy_cq> siw_spacer_;
  Handle<ibv_context, ibv_close_device> ctx_;
  std::string name_;
  uint8_t port_ = 1;
  ibv_device_attr attr_{};
  ibv_port_attr port_attr_{};
  mutable int64_t max_inline_ = -1;
};

const char* link_layer_name(uint8_t link_layer);
const char* port_state_name(ibv_port_state s);
int mtu_bytes(ibv_mtu mtu);
ibv_mtu mtu_enum(uint32_t bytes);  // 256..4096 (validate() allows no other); 1024 otherwise
// Link rate in Gb/s from the port's active width and speed (0 when unknown).
double port_rate_gbps(const ibv_port_attr& pa);

}  // namespace rdmasweep::verbs
