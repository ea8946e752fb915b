/* A bare post/poll loop over plain libibverbs: N RC QPs, each connected to itself,
 * post RDMA WRITEs (or READs, or fetch-and-adds) in chains of a post list, every
 * SIGNAL-th one signaled, into one CQ polled in batches of 16. Nothing else per
 * message: on the verbs stand-in's null device (RDMASWEEP_STANDIN_DEVICE=null) its
 * ns per message is the limit every tool's own loop shares (the device's cost and a
 * loop's least), so perftest's and rdmasweep's figures there read against it.
 *
 * Only the signaled WRs are written before a post (their wr_id; the signaled flag of
 * a chain's last WR when SIGNAL is a multiple of POST_LIST): the least a loop can do.
 *
 *   null_bare_loop [-d DEV] [-x GID] [-q QPS] [-l POST_LIST] [-Q SIGNAL] [-t DEPTH]
 *                  [-n MESSAGES_PER_QP] [-s SIZE] [-o write|read|faa] [-I] [-w]
 *
 * -I sends inline; -w posts through the ibv_wr_* API (ibv_wr_start ... ibv_wr_complete,
 * one call per chain) instead of ibv_post_send. Prints one line: messages, seconds,
 * ns per message and millions of messages per second, and ns per message by the
 * loop's CPU time (steadier than the wall clock on a shared host). */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_BATCH 16
#define QP_BITS 12 /* wr_id: (sequence << QP_BITS) | QP index */

static void die(const char* what, int err) {
  fprintf(stderr, "null_bare_loop: %s: %s\n", what, strerror(err));
  exit(1);
}

static double clock_s(clockid_t id) {
  struct timespec t;
  clock_gettime(id, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The port's first RoCE v2 IPv4-mapped GID, or 0. */
static int default_gid(struct ibv_context* ctx, const struct ibv_port_attr* port) {
  for (int i = 0; i < port->gid_tbl_len; ++i) {
    struct ibv_gid_entry e;
    if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0) != 0) continue;
    const uint8_t* g = e.gid.raw;
    if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && g[10] == 0xff && g[11] == 0xff) return i;
  }
  return 0;
}

/* RESET -> INIT -> RTR -> RTS, connected to itself. */
static void connect_self(struct ibv_qp* qp, const struct ibv_port_attr* port, int gid_index, int rd_atom) {
  struct ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                      IBV_ACCESS_REMOTE_ATOMIC;
  int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (rc) die("ibv_modify_qp(INIT)", rc);
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = port->active_mtu;
  a.dest_qp_num = qp->qp_num;
  a.max_dest_rd_atomic = (uint8_t)rd_atom;
  a.min_rnr_timer = 12;
  a.ah_attr.port_num = 1;
  a.ah_attr.dlid = port->lid;
  if (port->link_layer == IBV_LINK_LAYER_ETHERNET) {
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
    a.ah_attr.grh.hop_limit = 1;
    if (ibv_query_gid(qp->context, 1, gid_index, &a.ah_attr.grh.dgid)) die("ibv_query_gid", errno);
  }
  rc = ibv_modify_qp(qp, &a,
                     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (rc) die("ibv_modify_qp(RTR)", rc);
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = (uint8_t)rd_atom;
  rc = ibv_modify_qp(qp, &a,
                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                         IBV_QP_MAX_QP_RD_ATOMIC);
  if (rc) die("ibv_modify_qp(RTS)", rc);
}

int main(int argc, char** argv) {
  const char* dev_name = NULL;
  const char* op_name = "write";
  int gid_index = -1, inl = 0, wr_api = 0;
  uint32_t nqp = 1, post_list = 1, every = 16, depth = 128, size = 64;
  uint64_t per_qp = 10000000;
  for (int c; (c = getopt(argc, argv, "d:x:q:l:Q:t:n:s:o:Iw")) != -1;) {
    switch (c) {
      case 'd': dev_name = optarg; break;
      case 'x': gid_index = atoi(optarg); break;
      case 'q': nqp = (uint32_t)strtoul(optarg, NULL, 0); break;
      case 'l': post_list = (uint32_t)strtoul(optarg, NULL, 0); break;
      case 'Q': every = (uint32_t)strtoul(optarg, NULL, 0); break;
      case 't': depth = (uint32_t)strtoul(optarg, NULL, 0); break;
      case 'n': per_qp = strtoull(optarg, NULL, 0); break;
      case 's': size = (uint32_t)strtoul(optarg, NULL, 0); break;
      case 'o': op_name = optarg; break;
      case 'I': inl = 1; break;
      case 'w': wr_api = 1; break;
      default:
        fprintf(stderr, "usage: %s [-d DEV] [-x GID] [-q QPS] [-l POST_LIST] [-Q SIGNAL] [-t DEPTH] "
                        "[-n MESSAGES_PER_QP] [-s SIZE] [-o write|read|faa] [-I] [-w]\n", argv[0]);
        return 2;
    }
  }
  enum ibv_wr_opcode opcode = IBV_WR_RDMA_WRITE;
  if (strcmp(op_name, "read") == 0) opcode = IBV_WR_RDMA_READ;
  else if (strcmp(op_name, "faa") == 0) opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  else if (strcmp(op_name, "write") != 0) die("-o takes write, read or faa", EINVAL);
  if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) size = 8;
  /* Signaling costs nothing per WR: a chain's every SIGNAL-th WR is signaled when SIGNAL
   * divides POST_LIST (prebuilt), or the last WR of every (SIGNAL / POST_LIST)-th chain. A
   * full queue must hold a signaled WR, or nothing ever frees it; the last WR is signaled. */
  if (nqp < 1 || nqp >= (1u << QP_BITS) || post_list < 1 || every < 1 || post_list > depth || every > depth)
    die("need 1 <= QPS < 4096 and 1 <= POST_LIST, SIGNAL <= DEPTH", EINVAL);
  const int in_chain = post_list % every == 0;
  if (!in_chain && every % post_list != 0) die("SIGNAL must divide POST_LIST or be a multiple of it", EINVAL);
  if (per_qp % (in_chain ? post_list : every) != 0)
    die("MESSAGES_PER_QP must be a multiple of POST_LIST and SIGNAL", EINVAL);

  int ndev = 0;
  struct ibv_device** list = ibv_get_device_list(&ndev);
  struct ibv_device* dev = NULL;
  for (int i = 0; list && i < ndev; ++i)
    if (!dev_name || strcmp(ibv_get_device_name(list[i]), dev_name) == 0) dev = dev ? dev : list[i];
  if (!dev) die("no such RDMA device", ENODEV);
  struct ibv_context* ctx = ibv_open_device(dev);
  if (!ctx) die("ibv_open_device", errno);
  struct ibv_device_attr dattr;
  struct ibv_port_attr port;
  if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &port)) die("ibv_query_device/port", errno);
  if (gid_index < 0) gid_index = default_gid(ctx, &port);
  int rd_atom = dattr.max_qp_init_rd_atom < dattr.max_qp_rd_atom ? dattr.max_qp_init_rd_atom : dattr.max_qp_rd_atom;

  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  const size_t bytes = (size_t)nqp * 2 * (size < 64 ? 64 : size);  /* per QP: a source and a target */
  char* buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!pd || !buf) die("ibv_alloc_pd/aligned_alloc", errno);
  memset(buf, 0, bytes);
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                                     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
  if (!mr) die("ibv_reg_mr", errno);
  /* Each QP has at most depth/every + 1 signaled WRs outstanding. */
  const int cqe = (int)(nqp * (depth / every + 1));
  struct ibv_cq* cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
  if (!cq) die("ibv_create_cq", errno);

  struct ibv_qp** qp = calloc(nqp, sizeof *qp);
  struct ibv_qp_ex** qpx = calloc(nqp, sizeof *qpx);
  uint64_t* posted = calloc(nqp, sizeof *posted);
  uint64_t* done = calloc(nqp, sizeof *done);
  uint32_t* countdown = calloc(nqp, sizeof *countdown);
  /* The QPs that completed work since they last posted: only they can post more. */
  uint32_t* ready = calloc(nqp, sizeof *ready);
  unsigned char* marked = calloc(nqp, 1);
  struct ibv_send_wr* wr = calloc((size_t)nqp * post_list, sizeof *wr);
  struct ibv_sge* sge = calloc((size_t)nqp * post_list, sizeof *sge);
  if (!qp || !qpx || !posted || !done || !countdown || !ready || !marked || !wr || !sge) die("calloc", ENOMEM);
  for (uint32_t q = 0; q < nqp; ++q) {
    struct ibv_qp_init_attr_ex a;
    memset(&a, 0, sizeof a);
    a.send_cq = a.recv_cq = cq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = depth;
    a.cap.max_recv_wr = 1;
    a.cap.max_send_sge = a.cap.max_recv_sge = 1;
    a.cap.max_inline_data = inl ? size : 0;
    a.pd = pd;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    if (wr_api) {
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    }
    qp[q] = ibv_create_qp_ex(ctx, &a);
    if (!qp[q]) die("ibv_create_qp_ex", errno);
    if (wr_api && !(qpx[q] = ibv_qp_to_qp_ex(qp[q]))) die("ibv_qp_to_qp_ex", errno);
    connect_self(qp[q], &port, gid_index, rd_atom);
    countdown[q] = every / post_list;
    char* src = buf + (size_t)q * 2 * (size < 64 ? 64 : size);
    char* dst = src + (size < 64 ? 64 : size);
    for (uint32_t i = 0; i < post_list; ++i) {
      struct ibv_send_wr* w = &wr[q * post_list + i];
      struct ibv_sge* s = &sge[q * post_list + i];
      s->addr = (uintptr_t)src;
      s->length = size;
      s->lkey = mr->lkey;
      w->sg_list = s;
      w->num_sge = 1;
      w->opcode = opcode;
      w->send_flags = (inl ? IBV_SEND_INLINE : 0) | (in_chain && (i + 1) % every == 0 ? IBV_SEND_SIGNALED : 0);
      w->next = i + 1 < post_list ? w + 1 : NULL;
      if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        w->wr.atomic.remote_addr = (uintptr_t)dst;
        w->wr.atomic.rkey = mr->rkey;
        w->wr.atomic.compare_add = 1;
      } else {
        w->wr.rdma.remote_addr = (uintptr_t)dst;
        w->wr.rdma.rkey = mr->rkey;
      }
    }
  }

  struct ibv_wc wc[POLL_BATCH];
  uint32_t unfinished = nqp, nready = nqp;
  for (uint32_t q = 0; q < nqp; ++q) {
    ready[q] = q;
    marked[q] = 1;
  }
  const double t0 = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  while (unfinished > 0) {
    for (uint32_t r = 0; r < nready; ++r) {
      const uint32_t q = ready[r];
      marked[q] = 0;
      struct ibv_send_wr* w = &wr[q * post_list];
      struct ibv_send_wr* last = &w[post_list - 1];
      while (posted[q] < per_qp && posted[q] - done[q] + post_list <= depth) {
        /* Only the signaled WRs are written: their wr_id, and the flag of a chain's last. */
        int flagged = 0;
        if (in_chain) {
          for (uint32_t i = every - 1; i < post_list; i += every) w[i].wr_id = (posted[q] + i) << QP_BITS | q;
        } else if (--countdown[q] == 0) {
          countdown[q] = every / post_list;
          last->wr_id = (posted[q] + post_list - 1) << QP_BITS | q;
          last->send_flags |= IBV_SEND_SIGNALED;
          flagged = 1;
        }
        int rc;
        if (wr_api) {
          struct ibv_qp_ex* x = qpx[q];
          ibv_wr_start(x);
          for (uint32_t i = 0; i < post_list; ++i) {
            x->wr_id = w[i].wr_id;
            x->wr_flags = w[i].send_flags;
            if (opcode == IBV_WR_RDMA_WRITE) ibv_wr_rdma_write(x, w[i].wr.rdma.rkey, w[i].wr.rdma.remote_addr);
            else if (opcode == IBV_WR_RDMA_READ) ibv_wr_rdma_read(x, w[i].wr.rdma.rkey, w[i].wr.rdma.remote_addr);
            else ibv_wr_atomic_fetch_add(x, w[i].wr.atomic.rkey, w[i].wr.atomic.remote_addr, 1);
            if (inl) ibv_wr_set_inline_data(x, (void*)(uintptr_t)w[i].sg_list->addr, size);
            else ibv_wr_set_sge(x, mr->lkey, w[i].sg_list->addr, size);
          }
          rc = ibv_wr_complete(x);
        } else {
          struct ibv_send_wr* bad = NULL;
          rc = ibv_post_send(qp[q], w, &bad);
        }
        if (rc) die("post", rc);
        if (flagged) last->send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
        posted[q] += post_list;
      }
    }
    nready = 0;
    const int got = ibv_poll_cq(cq, POLL_BATCH, wc);
    if (got < 0) die("ibv_poll_cq", EIO);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) {
        fprintf(stderr, "null_bare_loop: completion error: %s\n", ibv_wc_status_str(wc[i].status));
        return 1;
      }
      const uint32_t q = (uint32_t)(wc[i].wr_id & ((1u << QP_BITS) - 1));
      done[q] = (wc[i].wr_id >> QP_BITS) + 1;
      if (!marked[q]) {
        marked[q] = 1;
        ready[nready++] = q;
      }
      if (done[q] == per_qp) --unfinished;
    }
  }
  const double seconds = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  const double messages = (double)per_qp * nqp;
  printf("%s %s qps %u post_list %u signal %u depth %u size %u%s %s: %.0f messages in %.3f s (%.3f s CPU): "
         "%.2f ns/message, %.2f M messages/s; by CPU time %.2f ns/message\n",
         ibv_get_device_name(dev), op_name, nqp, post_list, every, depth, size, inl ? " inline" : "",
         wr_api ? "ibv_wr_*" : "ibv_post_send", messages, seconds, cpu, seconds * 1e9 / messages,
         messages / seconds / 1e6, cpu * 1e9 / messages);

  /* FAA adds 1 to each QP's own target: the device must have done every add and
   * returned the last old value to the QP's source buffer. */
  if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    for (uint32_t q = 0; q < nqp; ++q) {
      uint64_t fetched, word;
      memcpy(&fetched, buf + (size_t)q * 128, 8);
      memcpy(&word, buf + (size_t)q * 128 + 64, 8);
      if (word != per_qp || fetched != per_qp - 1) {
        fprintf(stderr, "null_bare_loop: faa on QP %u left %llu (want %llu) and last fetched %llu (want %llu)\n", q,
                (unsigned long long)word, (unsigned long long)per_qp, (unsigned long long)fetched,
                (unsigned long long)(per_qp - 1));
        return 1;
      }
    }
    printf("faa: each QP's target is %llu, its last fetch %llu\n", (unsigned long long)per_qp,
           (unsigned long long)(per_qp - 1));
  }

  for (uint32_t q = 0; q < nqp; ++q) ibv_destroy_qp(qp[q]);
  ibv_destroy_cq(cq);
  ibv_dereg_mr(mr);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  ibv_free_device_list(list);
  free(buf);
  return 0;
}
