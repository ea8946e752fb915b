# Broadcom NetXtreme-E (bnxt_en + bnxt_re), RoCE v2 — pieced together: no complete public
# `ibv_devinfo -v` of a bnxt_re device could be read. The posts below do not name the chip
# (BCM57508/P2100G or other), so vendor_part_id is left out; BCM57508 would be 0x1750 (rdma-core
# providers/bnxt_re/main.c: CNA(BROADCOM, 0x1750) /* BCM57508 */).
# source (max_qp, max_qp_wr, max_qp_rd_atom, max_qp_init_rd_atom, max_cq, max_cqe):
#   https://github.com/uccl-project/uccl/issues/250 — excerpt of `ibv_devinfo -d rdma0 -vv` on the
#   "Broadcom NIC" of that cluster (comment by zhongjiechen, 2025-08-07).
# source (fw_ver, transport, link_layer): https://github.com/openucx/ucx/issues/11048 — `rdma dev`:
#   "bnxt_re0: node_type ca protocol roce fw 231.0.154.0"; ibstat "Broadcom NetXtreme-C/E RoCE
#   Driver HCA", rate 100 (Gb/s), one port each on bnxt_re0/bnxt_re1.
# source (rc, ud, atomic_cap, max_inline): https://github.com/openucx/ucx/issues/11121 — `ucx_info -d`
#   on bnxt_re0, same reporter as ucx#11048: rc_verbs and ud_verbs transports; rc_verbs lists
#   atomic_add/fadd/cswap 64 bit (domain: cpu) and put_short <= 96.
# source (atomic_cap = glob): Linux drivers/infiniband/hw/bnxt_re/ib_verbs.c bnxt_re_query_device
#   sets atomic_cap = IB_ATOMIC_GLOB if dev_attr->is_atomic, else IB_ATOMIC_NONE; UCX
#   (src/uct/ib/base/ib_md.c) offers 64-bit atomics only for ATOMIC_HCA or ATOMIC_GLOB; the
#   device above offers them, so it reports GLOB. Derived, not printed.
# source (vendor_id, max_mr_size, max_res_rd_atom, max_mcast_grp, max_mtu, max_msg_sz): same kernel
#   file: vendor_id = pdev->vendor (rdma-core main.c: PCI_VENDOR_ID_BROADCOM 0x14E4),
#   max_mr_size = BNXT_RE_MAX_MR_SIZE = BIT_ULL(39) (bnxt_re.h), max_res_rd_atom = 0,
#   max_mcast_grp = 0; bnxt_re_query_port: max_mtu = IB_MTU_4096,
#   max_msg_sz = (u32)BNXT_RE_MAX_MR_SIZE_LOW = BIT_ULL(30).
# source (max_inline): rdma-core providers/bnxt_re/bnxt_re-abi.h, BNXT_RE_MAX_INLINE_SIZE 0x60
#   ("Cu+ max inline data"); verbs.c bnxt_re_get_sq_slots() caps inline at 16 bytes x the device's
#   max_sge; UCX reports put_short <= 96 on bnxt_re0 (above).
# source (counters): kernel bnxt_re main.c, .alloc_hw_port_stats = bnxt_re_ib_alloc_hw_port_stats.
# NOT SET (not found published; the device beneath keeps its own): vendor_part_id, hw_ver,
#   max_sge, max_sge_rd, max_mr, max_pd, max_srq, max_srq_wr, max_srq_sge, max_ah, gid_tbl_len,
#   active_mtu (follows the netdev MTU: port_attr->active_mtu = iboe_get_mtu(netdev->mtu)).
name = Broadcom NetXtreme-E (bnxt_re)
transport = roce
link_layer = ethernet
rc = yes
ud = yes
vendor_id = 0x14e4
fw_ver = 231.0.154.0      # ucx#11048; the uccl#250 limits below may come from another chip/firmware
max_mr_size = 0x8000000000
max_qp = 131073
max_qp_wr = 4351
max_cq = 65536
max_cqe = 8388607
max_qp_rd_atom = 126
max_qp_init_rd_atom = 126
max_res_rd_atom = 0
atomic_cap = glob
max_mcast_grp = 0
max_inline = 96
max_mtu = 4096
max_msg_sz = 0x40000000
counters = yes
