package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/agentmail/agentmail/client"
)

// seedWords is the vocabulary of the seeded mails' text: English and
// Chinese words drawn with a Zipf distribution (the first are the most
// frequent), so that a search meets common, middling and rare terms as in
// real mail. Each body also carries "ref kNNNN", one of 10,000 rare
// references.
var seedWords = strings.Fields(`deploy 部署 build the cache release 发布 plan server 服务器 client database 数据库
	index query 查询 search mail agent 代理 session review 审查 merge branch commit 提交 test 测试 failure
	error 错误 timeout retry config 配置 network 网络 storage memory disk upgrade 升级 patch security 安全
	token login 登录 user report 报告 summary schedule meeting 会议 lunch budget 预算 design issue 问题
	ticket bug fix 修复 feature docs 文档 endpoint route handler stream event 事件 bridge platform 平台
	model prompt tool 工具 permission 权限 approve deny reminder 提醒 attachment 附件 file path workspace`)

// seedText answers a subject (3 words) and a body (14 words and a
// reference) for seeded mail i, the same for the same i.
func seedText(i int) (subject, body string) {
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(seedWords)-1))
	words := func(n int) string {
		w := make([]string, n)
		for j := range w {
			w[j] = seedWords[z.Uint64()]
		}
		return strings.Join(w, " ")
	}
	return words(3), fmt.Sprintf("%s ref k%04d.", words(14), r.IntN(10000))
}

// searchVariants are the timed searches of the measured agent's mail.
var searchVariants = []struct{ name, q, sort string }{
	{"rare reference", "k4821", ""},
	{"common word", "deploy", ""},
	{"common word, newest first", "deploy", client.SearchNewest},
	{"middling word", "ticket", ""},
	{"two Chinese characters", "部署", ""},
	{"three Chinese characters", "数据库", ""},
	{"phrase", `"deploy build"`, ""},
	{"prefix", "confi*", ""},
	{"two words and is:unread", "deploy cache is:unread", ""},
	{"word absent from the mail", "zzzyzx", ""},
}

// timeSearches times SearchRequests raw searches per variant as the
// measured agent (after 20 untimed), each answer checked; it answers one
// table row per variant: the hits of the first page and p50 / p99.
func (b *runner) timeSearches(ctx context.Context, agent *client.Client, raw *rawSender) ([][]string, error) {
	var rows [][]string
	for _, v := range searchVariants {
		first, err := agent.SearchMail(ctx, client.SearchQuery{Q: v.q, Sort: v.sort, Limit: 20})
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", v.name, err)
		}
		query := url.Values{"q": {v.q}, "limit": {"20"}}
		if v.sort != "" {
			query.Set("sort", v.sort)
		}
		path := "/api/v1/mail/search?" + query.Encode()
		lat := make([]time.Duration, 0, b.cfg.SearchRequests)
		for i := 0; i < b.cfg.SearchRequests+20; i++ {
			start := time.Now()
			status, body, err := raw.get(path)
			if err != nil {
				return nil, err
			}
			if status != http.StatusOK || !bytes.Contains(body, []byte(`"hits"`)) {
				return nil, fmt.Errorf("search %s: status %d: %.200s", v.name, status, body)
			}
			if i >= 20 {
				lat = append(lat, time.Since(start))
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.logf("search %s (%q): %d hits on the first page, p50 %s p99 %s", v.name, v.q, len(first.Hits), ms(pct(lat, 50)), ms(pct(lat, 99)))
		rows = append(rows, []string{v.name, "`" + v.q + "`", fmt.Sprint(len(first.Hits)), ms(pct(lat, 50)) + " / " + ms(pct(lat, 99))})
	}
	return rows, nil
}
