package corpus

// The tables below are read-only data used to build the synthetic site.
// They are never modified.

type category struct {
	slug string
	name string // display name in config.yaml
}

type section struct {
	key    string
	weight int // relative share of the articles
	cats   [3]category
}

var sections = [...]section{
	{"news", 35, [3]category{{"politics", "Политика"}, {"economy", "Экономика"}, {"world", "World"}}},
	{"digests", 15, [3]category{{"weekly", "Дайджест недели"}, {"tech", "Tech digest"}, {"culture", "Культура"}}},
	{"interviews", 10, [3]category{{"people", "Люди"}, {"business", "Business & Money"}, {"science", "Наука"}}},
	{"events", 15, [3]category{{"conferences", "Conferences"}, {"meetups", "Митапы"}, {"webinars", "Вебинары"}}},
	{"site-news", 5, [3]category{{"announcements", "Announcements"}, {"releases", "Релизы"}, {"team", "Команда"}}},
	{"features", 20, [3]category{{"longreads", "Лонгриды"}, {"reviews", "Reviews"}, {"opinion", "Мнение \"редакции\""}}},
}

type author struct {
	key  string
	name string
}

var authors = [...]author{
	{"ivan-petrov", "Иван Петров"},
	{"maria-ivanova", "Мария Иванова"},
	{"alexey-smirnov", "Алексей Смирнов"},
	{"olga-kuznetsova", "Ольга Кузнецова"},
	{"dmitry-popov", "Дмитрий Попов"},
	{"elena-sokolova", "Елена Соколова"},
	{"sergey-lebedev", "Сергей Лебедев"},
	{"anna-kozlova", "Анна Козлова"},
	{"nikolay-novikov", "Николай Новиков"},
	{"tatiana-morozova", "Татьяна Морозова"},
	{"john-smith", "John Smith"},
	{"jane-doe", "Jane Doe"},
	{"peter-oconnor", "Peter O'Connor"},
	{"emily-clark", "Emily Clark"},
	{"marco-rossi", "Marco Rossi"},
	{"yuki-tanaka", "Yuki Tanaka"},
	{"pavel-volkov", "Павел Волков"},
	{"irina-pavlova", "Ирина Павлова"},
	{"editorial", "Редакция"},
	{"guest-team", "Guest & Partners"},
}

var englishWords = [...]string{
	"market", "energy", "policy", "budget", "startup", "cloud", "data", "science",
	"research", "climate", "city", "transport", "health", "education", "culture",
	"music", "cinema", "sport", "football", "hockey", "election", "parliament",
	"summit", "trade", "export", "import", "bank", "currency", "inflation", "growth",
	"industry", "factory", "software", "hardware", "network", "security", "privacy",
	"internet", "mobile", "platform", "release", "update", "festival", "exhibition",
	"museum", "theatre", "history", "future", "report", "review", "interview",
	"opinion", "analysis", "forecast", "weather", "river", "forest", "space",
	"rocket", "satellite", "robot", "machine", "learning", "model", "language",
	"open", "source", "community", "developer", "conference", "meetup", "webinar",
	"launch", "deal", "merger", "investor", "fund", "price", "oil", "gas", "grain",
	"harvest", "airport", "railway", "bridge", "road", "housing", "school",
	"university", "student", "teacher", "doctor", "hospital", "vaccine", "court",
	"law", "reform", "tax", "pension", "salary", "record",
}

var russianWords = [...]string{
	"рынок", "энергия", "политика", "бюджет", "стартап", "облако", "данные", "наука",
	"исследование", "климат", "город", "транспорт", "здоровье", "образование",
	"культура", "музыка", "кино", "спорт", "футбол", "хоккей", "выборы", "парламент",
	"саммит", "торговля", "экспорт", "импорт", "банк", "валюта", "инфляция", "рост",
	"промышленность", "завод", "программа", "железо", "сеть", "безопасность",
	"приватность", "интернет", "мобильный", "платформа", "релиз", "обновление",
	"фестиваль", "выставка", "музей", "театр", "история", "будущее", "отчёт", "обзор",
	"интервью", "мнение", "анализ", "прогноз", "погода", "река", "лес", "космос",
	"ракета", "спутник", "робот", "машина", "обучение", "модель", "язык", "открытый",
	"код", "сообщество", "разработчик", "конференция", "встреча", "вебинар", "запуск",
	"сделка", "слияние", "инвестор", "фонд", "цена", "нефть", "газ", "зерно", "урожай",
	"аэропорт", "железная дорога", "мост", "дорога", "жильё", "школа", "университет",
	"студент", "учитель", "врач", "больница", "вакцина", "суд", "закон", "реформа",
	"налог", "пенсия", "зарплата",
}

// tags is the tag vocabulary, by rank: the English and Russian words
// interleaved, then the same words capitalised ("Market" is another tag
// than "market", as the filters of docs/contract.md §7 tell them apart by case).
var tags = tagVocabulary()

func tagVocabulary() []string {
	var words []string
	for k := range max(len(englishWords), len(russianWords)) {
		if k < len(englishWords) {
			words = append(words, englishWords[k])
		}
		if k < len(russianWords) {
			words = append(words, russianWords[k])
		}
	}
	out := make([]string, 0, 2*len(words))
	out = append(out, words...)
	for _, w := range words {
		out = append(out, string(appendCapitalized(nil, w)))
	}
	return out
}

// tagShift shapes the tag distribution: the tag of rank k is drawn with
// the weight 1/(k+tagShift), a Zipf-Mandelbrot law. On 10,000 articles,
// with 3 tags an article on average, the most used tag is on about one
// article in five, the median one on about 30 and the least used on about
// 10, as on a news site rather than one tag per article.
const tagShift = 3

// tagWeights holds the cumulative integer weights of tags by rank: integer,
// so that the draws are the same on every platform.
var tagWeights = cumulativeWeights(len(tags), tagShift)

func cumulativeWeights(n, shift int) []int {
	out := make([]int, n)
	total := 0
	for k := range out {
		total += 1_000_000 / (k + shift)
		out[k] = total
	}
	return out
}

var linkTargets = [...]string{
	"https://example.com",
	"https://example.com/docs/",
	"https://example.org/report?year=2024&lang=ru",
	"https://www.example.com/news/",
	"https://media.example.com/files/doc.pdf",
}
