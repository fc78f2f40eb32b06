package stats

import "github.com/statecraft/statecraft/statecore/keyed"

// TTLAges is how long ago the values of a TTL state were last accessed, at a given time: what a
// TTL would expire. A list state counts each element, a map state each entry.
type TTLAges struct {
	Values  int64       `json:"values"`
	Oldest  int64       `json:"oldestMillis"` // the smallest last-access timestamp
	Newest  int64       `json:"newestMillis"`
	Buckets []AgeBucket `json:"buckets"`
}

// AgeBucket counts the values whose age is below UpTo (and at or above the previous bucket's);
// the last bucket (UpTo 0, "older") holds the rest, and "future" the timestamps after --at.
type AgeBucket struct {
	Label string `json:"label"`
	UpTo  int64  `json:"upToMillis"`
	Count int64  `json:"count"`
}

var ageBuckets = []AgeBucket{
	{Label: "future"}, {Label: "<1m", UpTo: 60e3}, {Label: "<10m", UpTo: 600e3}, {Label: "<1h", UpTo: 3600e3},
	{Label: "<6h", UpTo: 6 * 3600e3}, {Label: "<1d", UpTo: 24 * 3600e3}, {Label: "<7d", UpTo: 7 * 24 * 3600e3},
	{Label: "<30d", UpTo: 30 * 24 * 3600e3}, {Label: "older"},
}

func (a *TTLAges) add(ts, at int64) {
	if a.Values == 0 {
		a.Oldest, a.Newest = ts, ts
		a.Buckets = append([]AgeBucket(nil), ageBuckets...)
	}
	a.Values++
	a.Oldest, a.Newest = min(a.Oldest, ts), max(a.Newest, ts)
	age := at - ts
	if age < 0 {
		a.Buckets[0].Count++
		return
	}
	for i := 1; i < len(a.Buckets)-1; i++ {
		if age < a.Buckets[i].UpTo {
			a.Buckets[i].Count++
			return
		}
	}
	a.Buckets[len(a.Buckets)-1].Count++
}

// TimerSpread is when the timers of a timer state fire, around a given time.
type TimerSpread struct {
	Earliest int64 `json:"earliestMillis"`
	Latest   int64 `json:"latestMillis"`
	Due      int64 `json:"due"` // before --at
	// NextHour counts the timers of each minute of the hour from --at.
	NextHour [60]int64 `json:"nextHourPerMinute"`
	Later    int64     `json:"later"` // an hour or more after --at
}

func (t *TimerSpread) add(ts, at int64, first bool) {
	if first {
		t.Earliest, t.Latest = ts, ts
	}
	t.Earliest, t.Latest = min(t.Earliest, ts), max(t.Latest, ts)
	switch d := ts - at; {
	case d < 0:
		t.Due++
	case d >= 3600e3:
		t.Later++
	default:
		t.NextHour[d/60e3]++
	}
}

// observeTime folds a record's TTL timestamps or timer timestamp into the state.
func (s *State) observeTime(r *keyed.Record, at int64) {
	if r.Kind == "timer" {
		if s.Timers == nil {
			s.Timers = &TimerSpread{}
		}
		s.Timers.add(r.Timestamp, at, s.Entries == 1)
		return
	}
	switch ts := r.TTL.(type) {
	case int64:
		if s.TTL == nil {
			s.TTL = &TTLAges{}
		}
		s.TTL.add(ts, at)
	case []int64:
		if s.TTL == nil {
			s.TTL = &TTLAges{}
		}
		for _, t := range ts {
			s.TTL.add(t, at)
		}
	}
}
