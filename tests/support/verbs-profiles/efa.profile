# AWS Elastic Fabric Adapter (efa), EFA gen 0xefa1: no RC; UD and SRD (SRD is an EFA
# driver QP type that the stand-in cannot model: ud = yes stands for both).
# source (limits): https://github.com/openucx/ucx/blob/9466d104a317c8ffddd9734e72055d8bbda021b3/contrib/ibmock/config.c
#   — the device tables of UCX's EFA mock ("IB devices mock ... Only EFA devices", contrib/ibmock/
#   README.md): efa_ibv_dev_attr, efa_ib_port_attr and efa_dev_attr (efadv). NOT an ibv_devinfo
#   posting: the file does not say which instance it was taken from, though its values
#   (vendor_part_id 61345 = 0xefa1, max_msg_sz 8928) look like a real device. No public
#   `ibv_devinfo -v` of an EFA device could be found; every limit below is from this file.
# source (transport, link_layer, vendor_id, fw_ver, max_mtu, active_mtu): real `ibv_devinfo` of
#   EFA devices: https://github.com/linux-rdma/rdma-core/pull/884 (efa_0, 0x1d0f/61344, hw_ver 0xEFA0,
#   "transport: unspecified (4)", fw 0.0.0.0, max_mtu/active_mtu 4096; that PR makes ibv_devinfo
#   print link_layer Unspecified instead of InfiniBand; sysfs says "Unknown") and
#   https://github.com/uccl-project/uccl/issues/163 (rdmap16s27, same values, "link_layer: Unspecified").
# source (rc = no, ud = yes): rdma-core providers/efa/verbs.c, efa_create_qp/efa_create_qp_ex
#   reject every qp_type but IBV_QPT_UD; SRD goes through efadv_create_qp_ex (EFADV_QP_DRIVER_TYPE_SRD).
# source (max_inline): ibmock efa_dev_attr.inline_buf_size = 32; rdma-core providers/efa/efa_io_defs.h
#   EFA_IO_TX_DESC_INLINE_MAX_SIZE 32 (64-byte TX descriptor; _128 variant 80). At run time
#   providers/efa/verbs.c rejects max_inline_data > the device's inline_buf_size_ex.
# source (counters): Linux drivers/infiniband/hw/efa/efa_main.c,
#   .alloc_hw_port_stats = efa_alloc_hw_port_stats.
name = AWS EFA
transport = unspecified
link_layer = unspecified
rc = no
ud = yes
vendor_id = 0x1d0f
vendor_part_id = 61345    # 0xefa1 (the rdma-core#884 / uccl#163 postings show 61344 = 0xefa0)
hw_ver = 0xefa1
fw_ver = 0.0.0.0
max_mr_size = 103079215104    # 0x1800000000 = 96 GiB
max_qp = 256
max_qp_wr = 4096          # efadv: max_sq_wr 4096, max_rq_wr 32768
max_sge = 2               # efadv: max_sq_sge 2, max_rq_sge 3
max_sge_rd = 1
max_cq = 512
max_cqe = 32768
max_mr = 262144
max_pd = 256
max_qp_rd_atom = 0
max_qp_init_rd_atom = 0
max_res_rd_atom = 0
atomic_cap = none
max_srq = 0
max_srq_wr = 0
max_srq_sge = 0
max_ah = 1024
max_mcast_grp = 0
max_inline = 32
active_mtu = 4096
max_mtu = 4096
gid_tbl_len = 1
max_msg_sz = 8928         # bytes, as in the mock (more than the 4096 that max_mtu can express)
counters = yes
